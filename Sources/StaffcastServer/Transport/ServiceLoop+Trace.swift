import Foundation
import StaffcastCore

/// The loop's stages of a traced message (`MessageTracer`): hand-off (posted → run here),
/// fan-out (queued on every subscriber), and the first and last write of its frame. One
/// message at a time per loop; a newer traced one replaces one whose writes are still
/// pending. The loop's thread only.
extension ServiceLoop {
    func traceQueued(_ trace: ChangeFeedTrace, posted: Double, started: Double) {
        let queued = MessageTracer.now()
        let tracer = metrics.tracer
        tracer.record(.handoff, started - posted)
        tracer.record(.fanout, queued - started)
        let recipients = engine.fannedOut.first { $0.seq == trace.seq }?.recipients ?? 0
        writeTrace = recipients > 0 ? LoopWriteTrace(frame: trace.frame, queuedAt: queued, remaining: recipients) : nil
    }

    /// Frames just written to one socket: the traced frame's first and last write.
    func traceWritten(_ frames: [OutFrame]) {
        guard var trace = writeTrace, frames.contains(where: { ObjectIdentifier($0) == trace.frame }) else { return }
        let now = MessageTracer.now()
        if !trace.firstWritten {
            trace.firstWritten = true
            metrics.tracer.record(.firstWrite, now - trace.queuedAt)
        }
        trace.remaining -= 1
        if trace.remaining <= 0 {
            metrics.tracer.record(.lastWrite, now - trace.queuedAt)
            writeTrace = nil
        } else {
            writeTrace = trace
        }
    }
}
