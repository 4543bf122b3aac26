package io.kvorum.node.transport.grpc;

import io.grpc.Status;
import io.kvorum.node.antientropy.AntiEntropyMessage;
import io.kvorum.node.antientropy.AntiEntropyMessage.DifferingBuckets;
import io.kvorum.node.antientropy.AntiEntropyMessage.Done;
import io.kvorum.node.antientropy.AntiEntropyMessage.HashQuery;
import io.kvorum.node.antientropy.AntiEntropyMessage.NodeHashes;
import io.kvorum.node.antientropy.AntiEntropyMessage.Open;
import io.kvorum.node.antientropy.AntiEntropyMessage.Records;
import io.kvorum.node.antientropy.RepairException;
import io.kvorum.node.antientropy.RepairException.Reason;
import io.kvorum.node.model.Entry;
import io.kvorum.proto.SyncDifferingBuckets;
import io.kvorum.proto.SyncDone;
import io.kvorum.proto.SyncHashQuery;
import io.kvorum.proto.SyncNodeHashes;
import io.kvorum.proto.SyncOpen;
import io.kvorum.proto.SyncRecord;
import io.kvorum.proto.SyncRecordBatch;
import io.kvorum.proto.SyncRequest;
import io.kvorum.proto.SyncResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

/**
 * Converts anti-entropy messages and failures between the core and the wire; the only place that
 * knows both. Failures map through one switch each way.
 */
final class AntiEntropyProtoUtils {

    private AntiEntropyProtoUtils() {
    }

    /** The wire form of an initiator's message (without the header). */
    static SyncRequest.Builder toRequest(AntiEntropyMessage message) {
        SyncRequest.Builder b = SyncRequest.newBuilder();
        if (message instanceof Open open) {
            b.setOpen(SyncOpen.newBuilder().setReplicationFactor(open.replicationFactor())
                    .setFanoutBits(open.fanoutBits()).setDepth(open.depth()));
        } else if (message instanceof HashQuery query) {
            b.setQuery(SyncHashQuery.newBuilder().setLevel(query.level())
                    .addAllIndices(IntStream.of(query.indices()).boxed().toList()));
        } else if (message instanceof DifferingBuckets differing) {
            b.setDiffering(SyncDifferingBuckets.newBuilder().setLast(differing.last())
                    .addAllBuckets(IntStream.of(differing.buckets()).boxed().toList()));
        } else if (message instanceof Records records) {
            b.setRecords(toBatch(records));
        } else if (message instanceof Done) {
            b.setDone(SyncDone.getDefaultInstance());
        } else {
            throw new IllegalArgumentException("an initiator does not send " + message);
        }
        return b;
    }

    /** The wire form of a responder's message. */
    static SyncResponse toResponse(AntiEntropyMessage message) {
        if (message instanceof NodeHashes hashes) {
            return SyncResponse.newBuilder().setHashes(SyncNodeHashes.newBuilder().setLevel(hashes.level())
                    .addAllHashes(LongStream.of(hashes.hashes()).boxed().toList())).build();
        }
        if (message instanceof Records records) {
            return SyncResponse.newBuilder().setRecords(toBatch(records)).build();
        }
        if (message instanceof Done) {
            return SyncResponse.newBuilder().setDone(SyncDone.getDefaultInstance()).build();
        }
        throw new IllegalArgumentException("a responder does not send " + message);
    }

    /** @throws IllegalArgumentException for a message without a step or with a malformed record */
    static AntiEntropyMessage fromRequest(SyncRequest request) {
        return switch (request.getStepCase()) {
            case OPEN -> new Open(request.getOpen().getReplicationFactor(), request.getOpen().getFanoutBits(),
                    request.getOpen().getDepth());
            case QUERY -> new HashQuery(request.getQuery().getLevel(),
                    request.getQuery().getIndicesList().stream().mapToInt(Integer::intValue).toArray());
            case DIFFERING -> new DifferingBuckets(
                    request.getDiffering().getBucketsList().stream().mapToInt(Integer::intValue).toArray(),
                    request.getDiffering().getLast());
            case RECORDS -> fromBatch(request.getRecords());
            case DONE -> new Done();
            case STEP_NOT_SET -> throw new IllegalArgumentException("a sync request without a step");
        };
    }

    /** @throws IllegalArgumentException for a message without a step or with a malformed record */
    static AntiEntropyMessage fromResponse(SyncResponse response) {
        return switch (response.getStepCase()) {
            case HASHES -> new NodeHashes(response.getHashes().getLevel(),
                    response.getHashes().getHashesList().stream().mapToLong(Long::longValue).toArray());
            case RECORDS -> fromBatch(response.getRecords());
            case DONE -> new Done();
            case STEP_NOT_SET -> throw new IllegalArgumentException("a sync response without a step");
        };
    }

    private static SyncRecordBatch toBatch(Records records) {
        SyncRecordBatch.Builder batch = SyncRecordBatch.newBuilder();
        for (Entry e : records.entries()) {
            batch.addRecords(SyncRecord.newBuilder().setKey(ReplicaProtoUtils.bytes(e.key()))
                    .setRecord(ReplicaProtoUtils.toRecordProto(e.record())));
        }
        return batch.build();
    }

    private static Records fromBatch(SyncRecordBatch batch) {
        List<Entry> entries = new ArrayList<>(batch.getRecordsCount());
        for (SyncRecord r : batch.getRecordsList()) {
            if (r.getKey().isEmpty()) {
                throw new IllegalArgumentException("a record without a key");
            }
            entries.add(new Entry(r.getKey().toByteArray(), ReplicaProtoUtils.toRecord(r.getRecord())));
        }
        return new Records(entries);
    }

    /** The status a responder ends a failed round with. */
    static Status toStatus(RepairException e) {
        Status status = switch (e.reason()) {
            case UNREACHABLE -> Status.UNAVAILABLE;
            case TIMEOUT -> Status.DEADLINE_EXCEEDED;
            case REFUSED -> Status.FAILED_PRECONDITION;
            case OVERLOADED -> Status.RESOURCE_EXHAUSTED;
            case PROTOCOL -> Status.INVALID_ARGUMENT;
            case CANCELLED -> Status.CANCELLED;
            case INTERNAL -> Status.INTERNAL;
        };
        return status.withDescription(e.getMessage());
    }

    /** What a failed call to {@code peer} means for the round. */
    static RepairException toRepairException(String peer, Throwable t) {
        Status status = Status.fromThrowable(t);
        String why = status.getCode() + (status.getDescription() != null ? ": " + status.getDescription() : "");
        Reason reason = switch (status.getCode()) {
            case UNAVAILABLE, CANCELLED, ABORTED, UNKNOWN -> Reason.UNREACHABLE;
            case DEADLINE_EXCEEDED -> Reason.TIMEOUT;
            case FAILED_PRECONDITION, PERMISSION_DENIED, UNAUTHENTICATED, UNIMPLEMENTED, NOT_FOUND -> Reason.REFUSED;
            case RESOURCE_EXHAUSTED -> Reason.OVERLOADED;
            case INVALID_ARGUMENT, OUT_OF_RANGE -> Reason.PROTOCOL;
            case OK, ALREADY_EXISTS, INTERNAL, DATA_LOSS -> Reason.INTERNAL;
        };
        String what = switch (reason) {
            case UNREACHABLE -> " is unreachable: ";
            case TIMEOUT -> " did not answer in time: ";
            case REFUSED -> " refused the round: ";
            case OVERLOADED -> " is overloaded: ";
            default -> " failed the round: ";
        };
        return new RepairException(reason, peer + what + why, t);
    }
}
