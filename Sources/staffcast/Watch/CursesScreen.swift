import CNcurses
import Foundation
import StaffcastClient
import StaffcastCore

/// The terminal, through ncurses: the only place `staffcast watch` touches the screen.
/// Draws `ScreenLine`s; maps styles to colours (or, with NO_COLOR, to bold/reverse only);
/// reads keys without blocking. `close()` restores the terminal.
final class CursesScreen {
    private let color: Bool
    private var open = false

    init(color: Bool) {
        // UTF-8 output needs a UTF-8 locale; fall back to C.UTF-8 when the environment has none.
        setlocale(LC_ALL, "")
        if let codeset = nl_langinfo(nl_item(CODESET)), String(cString: codeset) != "UTF-8" { setlocale(LC_ALL, "C.UTF-8") }
        initscr()
        cbreak()
        noecho()
        keypad(staffcast_stdscr(), true)
        nodelay(staffcast_stdscr(), true)
        curs_set(0)
        self.color = color && has_colors()
        if self.color {
            start_color()
            use_default_colors()
            init_pair(1, Int16(COLOR_WHITE), Int16(COLOR_RED))    // urgent
            init_pair(2, Int16(COLOR_BLACK), Int16(COLOR_YELLOW)) // high
            init_pair(3, Int16(COLOR_WHITE), Int16(COLOR_BLUE))   // normal
            init_pair(4, Int16(COLOR_BLACK), Int16(COLOR_WHITE))  // low (grey on most terminals)
            init_pair(5, Int16(COLOR_YELLOW), -1)                 // expiry warning
            init_pair(6, Int16(COLOR_CYAN), -1)                   // help
        }
        open = true
    }

    /// Whether ncurses can drive this terminal (`TERM` is in the terminal database).
    static var terminalKnown: Bool { staffcast_terminal_known() != 0 }

    deinit { close() }

    func close() {
        guard open else { return }
        open = false
        endwin()
    }

    var size: (width: Int, height: Int) { (Int(staffcast_cols()), Int(staffcast_lines())) }

    func bell() { beep() }

    func draw(_ lines: [ScreenLine]) {
        let window = staffcast_stdscr()
        werase(window)
        for (row, line) in lines.enumerated() {
            wmove(window, Int32(row), 0)
            for segment in line.segments {
                let attributes = attributes(for: segment.style)
                wattr_on(window, attr_t(attributes), nil)
                waddstr(window, segment.text)
                wattr_off(window, attr_t(attributes), nil)
            }
        }
        wrefresh(window)
    }

    private func attributes(for style: Segment.Style) -> Int32 {
        let bold = staffcast_attr_bold(), reverse = staffcast_attr_reverse(), dim = staffcast_attr_dim()
        func pair(_ n: Int16, _ fallback: Int32) -> Int32 { color ? staffcast_color_pair(n) : fallback }
        switch style {
        case .plain: return 0
        case .bar: return reverse
        case .badge: return bold | reverse
        case .dim: return dim
        case .selected: return reverse
        case .warning: return pair(5, bold)
        case .help: return pair(6, 0)
        case .priority(.urgent): return pair(1, bold | reverse) | bold
        case .priority(.high): return pair(2, bold)
        case .priority(.normal): return pair(3, 0)
        case .priority(.low): return pair(4, dim)
        }
    }

    /// The next key, or nil when none is waiting.
    func key() -> WatchState.Key? {
        let c = wgetch(staffcast_stdscr())
        switch c {
        case ERR: return nil
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_PPAGE: return .pageUp
        case KEY_NPAGE: return .pageDown
        case KEY_ENTER, 10, 13: return .enter
        case 27: return .escape
        case 3: return .interrupt
        case KEY_RESIZE: return .resize
        default:
            guard c > 0, c < 0x110000, let scalar = Unicode.Scalar(UInt32(c)) else { return nil }
            return .char(Character(scalar))
        }
    }
}
