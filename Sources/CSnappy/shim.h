// Debian's libsnappy (apt: libsnappy-dev), through its C interface: remote write compresses each request with
// snappy's block format.
#include <snappy-c.h>
