// ncurses for the full-screen `staffcast watch` view.
#ifndef STAFFCAST_NCURSES_SHIM_H
#define STAFFCAST_NCURSES_SHIM_H
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

/// COLOR_PAIR and A_* attributes are macros Swift cannot import.
static inline int staffcast_color_pair(short n) { return (int)COLOR_PAIR(n); }
static inline int staffcast_attr_bold(void) { return (int)A_BOLD; }
static inline int staffcast_attr_reverse(void) { return (int)A_REVERSE; }
static inline int staffcast_attr_dim(void) { return (int)A_DIM; }
/// stdscr, LINES and COLS are mutable C globals; Swift 6 refuses to touch those directly.
static inline WINDOW *staffcast_stdscr(void) { return stdscr; }
static inline int staffcast_lines(void) { return LINES; }
static inline int staffcast_cols(void) { return COLS; }
/// Whether the terminal database knows $TERM for stdout. initscr() prints "Error opening
/// terminal" and exits the process when it does not; asking first lets watch fall back to lines.
static inline int staffcast_terminal_known(void) {
    int error = 0;
    if (setupterm(NULL, 1, &error) != OK) return 0;
    del_curterm(cur_term);
    return 1;
}
#endif
