// Closes, as the test process starts, the pipes and sockets it inherited beyond stdin, stdout
// and stderr. `swift test --parallel` starts a process per test from several threads at once,
// and a process started while another test's output pipe was being set up inherits its write
// end (seen in /proc/PID/fd): SwiftPM then sees that other test end only when this one ends too,
// so a short test held its worker as long as the longest test started beside it (a 1 s test
// reported 68 s, next to schemathesis). Nothing here uses such a descriptor; they all come from
// the spawner, without close-on-exec. Runs once, at load, before any test code (single thread).
#include "CTestDescriptors.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int closed_count = 0;

int ctest_closed_inherited_descriptors(void) { return closed_count; }

__attribute__((constructor)) static void close_inherited_descriptors(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL) return;
    int listing = dirfd(dir);
    int found[1024];
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL && count < 1024) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        int fd = atoi(entry->d_name);
        if (fd > 2 && fd != listing) found[count++] = fd;
    }
    closedir(dir);
    for (int i = 0; i < count; i++) {
        int flags = fcntl(found[i], F_GETFD);
        struct stat st;
        // Only inherited ones (no close-on-exec) that are pipes or sockets: whatever a library
        // opened at load (eventfd, /dev/null…) stays.
        if (flags < 0 || (flags & FD_CLOEXEC) || fstat(found[i], &st) != 0) continue;
        if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
            close(found[i]);
            closed_count += 1;
        }
    }
}
