package io.kvorum.node.transport.grpc;

import io.kvorum.node.coordinator.JoinSelection;
import io.kvorum.node.model.Entry;
import io.kvorum.proto.RangeEntry;
import io.kvorum.proto.RangeScanBatch;
import io.kvorum.proto.RangeScanRequest;
import java.util.ArrayList;
import java.util.List;

/** Converts range scans between core entries and their wire form. */
final class RangeProtoUtils {

    private RangeProtoUtils() {
    }

    static RangeScanRequest.Builder toRangeScanRequestProto(byte[] start, byte[] end) {
        RangeScanRequest.Builder request = RangeScanRequest.newBuilder().setStart(ReplicaProtoUtils.bytes(start));
        if (end != null) {
            request.setEnd(ReplicaProtoUtils.bytes(end));
        }
        return request;
    }

    static io.kvorum.proto.JoinSelection toProto(JoinSelection selection) {
        return io.kvorum.proto.JoinSelection.newBuilder()
                .addAllCurrent(selection.current())
                .addAllComing(selection.coming())
                .setReplicationFactor(selection.replicationFactor())
                .setTaker(selection.taker())
                .setSource(selection.source())
                .addAllPassedOver(selection.passedOver())
                .setPart(selection.part() == JoinSelection.Part.CHOSEN ? io.kvorum.proto.JoinSelection.Part.CHOSEN
                        : io.kvorum.proto.JoinSelection.Part.DIGESTS)
                .build();
    }

    /**
     * The selection a request asks for, or null for every entry.
     *
     * @throws IllegalArgumentException for a malformed selection
     */
    static JoinSelection selectionOf(RangeScanRequest request) {
        if (!request.hasJoin()) {
            return null;
        }
        io.kvorum.proto.JoinSelection s = request.getJoin();
        JoinSelection.Part part = switch (s.getPart()) {
            case CHOSEN -> JoinSelection.Part.CHOSEN;
            case DIGESTS -> JoinSelection.Part.DIGESTS;
            default -> throw new IllegalArgumentException("unknown part of a join selection");
        };
        return new JoinSelection(s.getCurrentList(), s.getComingList(), s.getReplicationFactor(), s.getTaker(),
                s.getSource(), s.getPassedOverList(), part);
    }

    /** The end of the range, or null for "to the last key". */
    static byte[] end(RangeScanRequest request) {
        return request.hasEnd() ? request.getEnd().toByteArray() : null;
    }

    /**
     * A storage batch as one or more messages, each ending once its entries reach {@code maxBytes}:
     * a message then stays below {@code maxBytes} plus one entry, which the peer's inbound message
     * limit allows for, whatever the size of the storage batch.
     */
    static List<RangeScanBatch> toRangeScanBatchProtos(List<Entry> entries, int maxBytes) {
        List<RangeScanBatch> messages = new ArrayList<>(1);
        RangeScanBatch.Builder message = RangeScanBatch.newBuilder();
        int bytes = 0;
        for (Entry e : entries) {
            RangeEntry proto = RangeEntry.newBuilder()
                    .setKey(ReplicaProtoUtils.bytes(e.key()))
                    .setRecord(ReplicaProtoUtils.toRecordProto(e.record()))
                    .build();
            message.addEntries(proto);
            bytes += proto.getSerializedSize();
            if (bytes >= maxBytes) {
                messages.add(message.build());
                message = RangeScanBatch.newBuilder();
                bytes = 0;
            }
        }
        if (message.getEntriesCount() > 0) {
            messages.add(message.build());
        }
        return messages;
    }

    /** @throws IllegalArgumentException when an entry is malformed */
    static List<Entry> toEntries(RangeScanBatch batch) {
        List<Entry> entries = new ArrayList<>(batch.getEntriesCount());
        for (RangeEntry e : batch.getEntriesList()) {
            if (!e.hasRecord()) {
                throw new IllegalArgumentException("range entry without a record");
            }
            entries.add(new Entry(e.getKey().toByteArray(), ReplicaProtoUtils.toRecord(e.getRecord())));
        }
        return entries;
    }
}
