/* tool_fs — placeholder until implemented. */
#include "config.h"
typedef int tool_fs_placeholder;
