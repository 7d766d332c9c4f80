// libxcrypt (Debian's libcrypt1, headers in libcrypt-dev): crypt_r checks the bcrypt hashes of [http] users_file.
#include <crypt.h>
