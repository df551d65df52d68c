/* result — placeholder until implemented. */
#include "config.h"
typedef int result_placeholder;
