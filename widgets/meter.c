/* meter — filled and empty cells; eighths are not worth their glyph troubles. */
#include "config.h"

#include "meter.h"

#include <math.h>

#include "draw.h"

void meter_draw(int y, int x, int w, double frac)
{
	enum theme_role role = frac > 1.0 ? THEME_METER_OVER : THEME_METER;
	int fill;

	if (w <= 0)
		return;
	if (!isfinite(frac) || frac < 0)
		frac = 0;
	fill = (int)lround((frac > 1.0 ? 1.0 : frac) * w);
	for (int i = 0; i < w; i++)
		draw_text(y, x + i, 1, i < fill ? "\xe2\x96\x88" : "\xc2\xb7",
			  i < fill ? role : THEME_DIM);
}
