package io.kvorum.perf.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** The configuration perf peers gives Cassandra and etcd: what perf/README.md says it is. */
class PeerSettingsTest {

    @Test
    @SuppressWarnings("unchecked")
    void cassandraYamlIsValidYamlWithTheSizingAndDurabilityTheReportStates() {
        String yaml = CassandraSettings.yaml("127.0.0.2", "127.0.0.1", 17000, 19042,
                CassandraSettings.Folders.under(Path.of("/tmp/c/n2")));
        Map<String, Object> conf = new Yaml().load(yaml);

        assertThat(conf).containsEntry("listen_address", "127.0.0.2").containsEntry("rpc_address", "127.0.0.2")
                .containsEntry("storage_port", 17000).containsEntry("native_transport_port", 19042)
                .containsEntry("concurrent_reads", 16).containsEntry("concurrent_writes", 16)
                .containsEntry("num_tokens", 16).containsEntry("commitlog_sync", "periodic")
                .containsEntry("commitlog_sync_period", "10000ms").containsEntry("auto_bootstrap", false)
                .containsEntry("commitlog_directory", "/tmp/c/n2/commitlog");
        List<Map<String, Object>> seeds = (List<Map<String, Object>>) conf.get("seed_provider");
        assertThat(seeds.get(0).get("parameters").toString()).contains("127.0.0.1:17000");
        assertThat((List<String>) conf.get("data_file_directories")).containsExactly("/tmp/c/n2/data");
    }

    @Test
    void cassandraRunsWithTheHeapGivenG1AndTheJamAgentWhenItIsOnTheClassPath() {
        List<String> flags = CassandraSettings.jvmOptions("1g", Path.of("/r/c.yaml"), Path.of("/r/logback.xml"),
                Path.of("/d/n1"), Path.of("/m2/jamm-0.4.0.jar"));
        assertThat(flags).contains("-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-Dcassandra.config=file:///r/c.yaml",
                "-javaagent:/m2/jamm-0.4.0.jar", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED");
        assertThat(CassandraSettings.jvmOptions("1g", Path.of("/r/c.yaml"), Path.of("/r/l.xml"), Path.of("/d"), null))
                .noneMatch(f -> f.startsWith("-javaagent"));
    }

    @Test
    void etcdMembersKnowEachOtherAndCompactTheirHistory() {
        List<EtcdSettings.Member> members = List.of(new EtcdSettings.Member("n1", 2001, 3001),
                new EtcdSettings.Member("n2", 2002, 3002), new EtcdSettings.Member("n3", 2003, 3003));
        List<String> command = EtcdSettings.command("/usr/bin/etcd", members.get(1), members, Path.of("/d/n2"));

        assertThat(command.get(0)).isEqualTo("/usr/bin/etcd");
        assertThat(command).contains("--name=n2", "--data-dir=/d/n2", "--listen-client-urls=http://127.0.0.1:2002",
                "--listen-peer-urls=http://127.0.0.1:3002",
                "--initial-cluster=n1=http://127.0.0.1:3001,n2=http://127.0.0.1:3002,n3=http://127.0.0.1:3003",
                "--initial-cluster-state=new", "--auto-compaction-mode=periodic", "--auto-compaction-retention=5m");
        assertThat(command).noneMatch(f -> f.contains("unsafe-no-fsync"));
    }
}
