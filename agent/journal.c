/* journal — placeholder until implemented. */
#include "config.h"
typedef int journal_placeholder;
