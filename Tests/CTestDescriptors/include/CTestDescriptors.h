#ifndef CTESTDESCRIPTORS_H
#define CTESTDESCRIPTORS_H

/// The number of inherited pipes and sockets the test process closed when it started
/// (CloseInheritedDescriptors.c): nothing needs to call it, the closing happens at load.
int ctest_closed_inherited_descriptors(void);

#endif
