// libqrencode (Debian: libqrencode-dev). Imported only by StaffcastQR, whose QRCode owns and
// frees every QRcode.
#include <qrencode.h>
