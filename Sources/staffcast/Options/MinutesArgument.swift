import ArgumentParser
import StaffcastCore

/// An option value in minutes, written as a duration (`30m`, `2h`, `3d`) or a plain number of
/// minutes (what these options always took). The range is checked where the value is used.
struct MinutesArgument: ExpressibleByArgument, Sendable {
    let minutes: Int

    init?(argument: String) {
        guard let m = DurationText.minutes(argument) else { return nil }
        minutes = m
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
