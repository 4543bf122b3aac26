package io.kvorum.node.transport.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.kvorum.node.model.Record;
import io.kvorum.node.model.RecordDigest;
import io.kvorum.proto.RecordDigestProto;
import io.kvorum.proto.RecordProto;

/** Converts between core records and their wire form; the only place that knows both. */
final class ReplicaProtoUtils {

    private ReplicaProtoUtils() {
    }

    static RecordProto toRecordProto(Record record) {
        return RecordProto.newBuilder()
                .setTimestamp(record.timestamp())
                .setWriter(record.writer())
                .setTombstone(record.tombstone())
                .setExpiresAtMillis(record.expiresAtMillis())
                // Records are immutable by contract, so the bytes can be shared rather than copied.
                .setValue(UnsafeByteOperations.unsafeWrap(record.value()))
                .build();
    }

    /** @throws IllegalArgumentException when the message is not a valid record */
    static Record toRecord(RecordProto proto) {
        if (proto.getWriter().isEmpty()) {
            throw new IllegalArgumentException("record without a writer");
        }
        return new Record(proto.getTimestamp(), proto.getWriter(), proto.getTombstone(),
                proto.getExpiresAtMillis(), proto.getValue().toByteArray());
    }

    static RecordDigestProto toDigestProto(RecordDigest digest) {
        return RecordDigestProto.newBuilder()
                .setTimestamp(digest.timestamp())
                .setWriter(digest.writer())
                .setTombstone(digest.tombstone())
                .setExpiresAtMillis(digest.expiresAtMillis())
                .setValueHash(UnsafeByteOperations.unsafeWrap(digest.valueHash()))
                .build();
    }

    /** @throws IllegalArgumentException when the message is not a valid digest */
    static RecordDigest toDigest(RecordDigestProto proto) {
        if (proto.getWriter().isEmpty()) {
            throw new IllegalArgumentException("digest without a writer");
        }
        return new RecordDigest(proto.getTimestamp(), proto.getWriter(), proto.getTombstone(),
                proto.getExpiresAtMillis(), proto.getValueHash().toByteArray());
    }

    static ByteString bytes(byte[] b) {
        return UnsafeByteOperations.unsafeWrap(b);
    }
}
