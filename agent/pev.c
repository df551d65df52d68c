/* pev — placeholder until implemented. */
#include "config.h"
typedef int pev_placeholder;
