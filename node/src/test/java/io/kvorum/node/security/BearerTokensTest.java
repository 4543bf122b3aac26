package io.kvorum.node.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.LogCapture;
import io.kvorum.node.security.BearerTokens.Bearer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The token file of {@code --auth-token-file} (docs/operations.md#security): parsing, matching, and rotation by {@link BearerTokens#refresh}. */
class BearerTokensTest {

    @TempDir
    Path dir;

    private Path file(String content) throws IOException {
        Path f = dir.resolve("tokens");
        Files.writeString(f, content);
        return f;
    }

    @Test
    void acceptsEachListedTokenAndNothingElse() throws Exception {
        BearerTokens tokens = BearerTokens.load(file("alpha\n\n  beta  \r\n\t\n"));

        assertThat(tokens.size()).isEqualTo(2);
        assertThat(tokens.accepts("Bearer alpha")).isTrue();
        assertThat(tokens.accepts("Bearer beta")).as("spaces around a line are not part of the token").isTrue();
        assertThat(tokens.accepts("bearer alpha")).as("the scheme is case-insensitive").isTrue();
        assertThat(tokens.accepts("Bearer gamma")).isFalse();
        assertThat(tokens.accepts("Bearer alph")).as("a prefix of a token").isFalse();
        assertThat(tokens.accepts("Bearer alphaa")).isFalse();
        assertThat(tokens.accepts("Basic alpha")).as("another scheme").isFalse();
        assertThat(tokens.accepts("alpha")).as("no scheme").isFalse();
        assertThat(tokens.accepts("Bearer ")).isFalse();
        assertThat(tokens.accepts("Bearer")).isFalse();
        assertThat(tokens.accepts(null)).as("no header").isFalse();
    }

    @Test
    void aFileWithNoTokenOrThatCannotBeReadIsRefusedWithoutItsContent() throws Exception {
        assertThatThrownBy(() -> BearerTokens.load(file("\n  \n")))
                .isInstanceOf(BearerTokens.InvalidTokenFileException.class).hasMessageContaining("no token");
        assertThatThrownBy(() -> BearerTokens.load(file("# only a comment\nnot-a-token!\n")))
                .isInstanceOf(BearerTokens.InvalidTokenFileException.class)
                .hasMessageContaining("line(s) [2] are not bearer tokens").hasMessageNotContaining("not-a-token!");
        assertThatThrownBy(() -> BearerTokens.load(dir.resolve("absent")))
                .isInstanceOf(BearerTokens.InvalidTokenFileException.class).hasMessageContaining("cannot be read");
    }

    @Test
    void refreshSwapsToTheNewTokensAndKeepsTheOldOnesWhileTheFileIsEmptyOrUnreadable() throws Exception {
        Path f = file("old\n");
        BearerTokens tokens = BearerTokens.load(f);

        Files.writeString(f, "old\nnew\n"); // rotation, step 1: both valid
        tokens.refresh();
        assertThat(tokens.accepts("Bearer old")).isTrue();
        assertThat(tokens.accepts("Bearer new")).isTrue();

        Files.writeString(f, ""); // an editor truncated it and has not written yet
        tokens.refresh();
        assertThat(tokens.accepts("Bearer old")).as("kept while the file is empty").isTrue();
        assertThat(tokens.accepts("Bearer new")).isTrue();

        Files.delete(f); // a rewrite by rename, caught between the two steps
        tokens.refresh();
        assertThat(tokens.accepts("Bearer new")).as("kept while the file is missing").isTrue();

        Files.writeString(f, "new\n"); // rotation, step 2: the old token retired
        tokens.refresh();
        assertThat(tokens.accepts("Bearer new")).isTrue();
        assertThat(tokens.accepts("Bearer old")).isFalse();
        assertThat(tokens.size()).isEqualTo(1);
    }

    @Test
    void commentsAByteOrderMarkAndLinesNoClientCouldSendAreNotTokensAndAreNamedByLineOnly() throws Exception {
        LogCapture logs = new LogCapture();
        logs.attach();
        try {
            BearerTokens tokens = BearerTokens.load(file("\uFEFFfirst\r\n# prod tokens\nfoo\"bar\nbase64+/x==\n"));

            assertThat(tokens.accepts("Bearer first")).as("the byte-order mark is not part of the first token").isTrue();
            assertThat(tokens.accepts("Bearer base64+/x==")).isTrue();
            assertThat(tokens.accepts("Bearer # prod tokens")).as("a comment").isFalse();
            assertThat(tokens.accepts("Bearer foo\"bar")).as("not an RFC 6750 token").isFalse();
            assertThat(tokens.size()).isEqualTo(2);
            assertThat(logs.problems()).singleElement().asString().contains("line(s) [3]").doesNotContain("foo");
        } finally {
            logs.detach();
        }
    }

    @Test
    void aFileTooLargeOrWithTooManyTokensIsRefusedAtLoadAndKeepsThePreviousTokensOnRefresh() throws Exception {
        StringBuilder many = new StringBuilder();
        for (int i = 0; i <= BearerTokens.MAX_TOKENS; i++) {
            many.append("token").append(i).append('\n');
        }
        assertThatThrownBy(() -> BearerTokens.load(file(many.toString())))
                .isInstanceOf(BearerTokens.InvalidTokenFileException.class).hasMessageContaining("more than 1000 tokens");
        String huge = "t".repeat(BearerTokens.MAX_FILE_BYTES) + "\n";
        assertThatThrownBy(() -> BearerTokens.load(file(huge)))
                .isInstanceOf(BearerTokens.InvalidTokenFileException.class).hasMessageContaining("larger than 1048576 bytes");

        Path f = file("current\n");
        BearerTokens tokens = BearerTokens.load(f);
        Files.writeString(f, huge);
        tokens.refresh();
        assertThat(tokens.accepts("Bearer current")).as("kept while the file is too large").isTrue();
        assertThat(tokens.size()).isEqualTo(1);
    }

    @Test
    void aLineGivesTheTokensRoleAndNameAndABareTokenIsAnAdminNamedByItsDigest() throws Exception {
        BearerTokens tokens = BearerTokens.load(file("bare\nscraper read prometheus\n\tapp   write\t\nops admin ops@example.org\n"));

        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest("bare".getBytes(StandardCharsets.UTF_8)));
        assertThat(tokens.bearer("Bearer bare")).isEqualTo(new Bearer(digest.substring(0, 8), Role.ADMIN));
        assertThat(tokens.bearer("Bearer scraper")).isEqualTo(new Bearer("prometheus", Role.READ));
        assertThat(tokens.bearer("Bearer app")).as("tabs and runs of spaces separate fields too")
                .isEqualTo(new Bearer(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                        .digest("app".getBytes(StandardCharsets.UTF_8)), 0, 4), Role.WRITE));
        assertThat(tokens.bearer("Bearer ops")).isEqualTo(new Bearer("ops@example.org", Role.ADMIN));
        assertThat(tokens.bearer("Bearer read")).as("a role is not a token").isNull();
        assertThat(tokens.bearer("Bearer prometheus")).as("nor is a NAME").isNull();
        assertThat(tokens.summary()).isEqualTo("4 bearer token(s) (admin 2, write 1, read 1)");
    }

    @Test
    void anUnknownRoleABadNameAFourthFieldOrATokenListedTwiceMakeTheFileInvalidWithoutQuotingIt() throws Exception {
        String token = "s3cret-token-value";
        String other = "other-s3cret-value";
        record Case(String file, String message) {
        }
        for (Case c : new Case[] {
                new Case("ok\n" + token + " " + other + "\n", "line 2: the second field is not a role"),
                new Case(token + " Read\n", "line 1: the second field is not a role"),
                new Case(token + " read name " + other + "\n", "line 1 has more than three fields"),
                new Case(token + " read bad\u00e9name\n", "line 1: the NAME (third field) is 1 to 64"),
                new Case(token + " read " + token + "\n", "not the token itself"),
                new Case(token + " read\n\n" + token + " admin ops\n", "lists a token twice, on lines 1 and 3")}) {
            assertThatThrownBy(() -> BearerTokens.load(file(c.file())), c.file())
                    .isInstanceOf(BearerTokens.InvalidTokenFileException.class)
                    .hasMessageContaining(c.message())
                    .hasMessageNotContaining(token).hasMessageNotContaining(other);
        }
    }

    @Test
    void aRefreshThatChangesOnlyARoleOrANameTakesEffect() throws Exception {
        Path f = file("t read\n");
        BearerTokens tokens = BearerTokens.load(f);

        Files.writeString(f, "t write app\n");
        tokens.refresh();
        assertThat(tokens.bearer("Bearer t")).isEqualTo(new Bearer("app", Role.WRITE));

        Files.writeString(f, "t unknown-role\n"); // invalid: the previous roles stay
        tokens.refresh();
        assertThat(tokens.bearer("Bearer t")).isEqualTo(new Bearer("app", Role.WRITE));
    }
}
