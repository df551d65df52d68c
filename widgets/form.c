/* form — fields as strbufs with a byte cursor kept on character boundaries. */
#include "config.h"

#include "form.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "modal.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* Longest text a field accepts (bytes). */
#define FIELD_MAX 8192

struct field {
	char *label;
	struct strbuf text;
	size_t cur; /* byte offset of the cursor */
};

struct form {
	char *title, *hint, *error;
	struct field *f;
	size_t n, cap, focus;
};

struct form *form_new(const char *title, const char *hint)
{
	struct form *f = xcalloc(1, sizeof(*f));

	f->title = xstrdup(title);
	f->hint = xstrdup(hint);
	return f;
}

void form_free(struct form *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		free(f->f[i].label);
		strbuf_release(&f->f[i].text);
	}
	free(f->f);
	free(f->title);
	free(f->hint);
	free(f->error);
	free(f);
}

void form_add(struct form *f, const char *label, const char *value)
{
	struct field *fd;

	f->f = xgrow(f->f, &f->cap, f->n + 1, sizeof(*f->f));
	fd = &f->f[f->n++];
	fd->label = xstrdup(label);
	strbuf_init(&fd->text);
	if (value) {
		char *clean = textsan_clean(value, strlen(value), 0);

		strbuf_adds(&fd->text, clean);
		free(clean);
	}
	fd->cur = fd->text.len;
}

size_t form_count(const struct form *f)
{
	return f->n;
}

const char *form_value(const struct form *f, size_t i)
{
	return i < f->n ? f->f[i].text.buf : "";
}

void form_set_error(struct form *f, const char *msg)
{
	free(f->error);
	f->error = xstrdup(msg);
}

static size_t prev_char(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[--i] & 0xC0) == 0x80)
		;
	return i;
}

static size_t next_char(const char *s, size_t len, size_t i)
{
	if (i >= len)
		return len;
	i++;
	while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
		i++;
	return i;
}

static void delete_range(struct field *fd, size_t a, size_t b)
{
	if (b <= a)
		return;
	memmove(fd->text.buf + a, fd->text.buf + b, fd->text.len - b + 1);
	fd->text.len -= b - a;
	if (fd->cur > b)
		fd->cur -= b - a;
	else if (fd->cur > a)
		fd->cur = a;
}

static void insert_cp(struct field *fd, unsigned int cp)
{
	char enc[4];
	size_t n;
	struct strbuf tail;

	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp > 0x10FFFF || fd->text.len >= FIELD_MAX)
		return;
	if (cp < 0x80) {
		enc[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		enc[0] = (char)(0xC0 | (cp >> 6)), enc[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	} else if (cp < 0x10000) {
		enc[0] = (char)(0xE0 | (cp >> 12)), enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		enc[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	} else {
		enc[0] = (char)(0xF0 | (cp >> 18)), enc[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		enc[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), enc[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	strbuf_init(&tail);
	strbuf_adds(&tail, fd->text.buf + fd->cur);
	fd->text.len = fd->cur;
	fd->text.buf[fd->cur] = '\0';
	strbuf_add(&fd->text, enc, n);
	strbuf_add(&fd->text, tail.buf, tail.len);
	strbuf_release(&tail);
	fd->cur += n;
}

static enum form_result move_focus(struct form *f, int delta)
{
	if (f->n == 0)
		return FORM_CONTINUE;
	f->focus = (f->focus + f->n + (size_t)(delta + (int)f->n)) % f->n;
	return FORM_CONTINUE;
}

enum form_result form_key(struct form *f, bool is_key, unsigned int ch)
{
	struct field *fd = f->n ? &f->f[f->focus] : NULL;
	size_t p;

	if (!is_key && ch == 27)
		return FORM_CANCEL;
	if ((!is_key && ch == 19) || (is_key && ch == KEY_F(2))) /* ^S, F2 */
		return FORM_SUBMIT;
	if (!fd)
		return (!is_key && (ch == '\n' || ch == '\r')) ? FORM_SUBMIT : FORM_CONTINUE;
	if (is_key) {
		switch (ch) {
		case KEY_ENTER:
			if (f->focus + 1 >= f->n)
				return FORM_SUBMIT;
			return move_focus(f, 1);
		case KEY_DOWN: return move_focus(f, 1);
		case KEY_UP:
		case KEY_BTAB: return move_focus(f, -1);
		case KEY_LEFT: fd->cur = prev_char(fd->text.buf, fd->cur); break;
		case KEY_RIGHT: fd->cur = next_char(fd->text.buf, fd->text.len, fd->cur); break;
		case KEY_HOME: fd->cur = 0; break;
		case KEY_END: fd->cur = fd->text.len; break;
		case KEY_BACKSPACE:
			delete_range(fd, prev_char(fd->text.buf, fd->cur), fd->cur);
			break;
		case KEY_DC:
			delete_range(fd, fd->cur, next_char(fd->text.buf, fd->text.len, fd->cur));
			break;
		default: break;
		}
		return FORM_CONTINUE;
	}
	switch (ch) {
	case '\n':
	case '\r':
		if (f->focus + 1 >= f->n)
			return FORM_SUBMIT;
		return move_focus(f, 1);
	case '\t': return move_focus(f, 1);
	case 127:
	case 8: delete_range(fd, prev_char(fd->text.buf, fd->cur), fd->cur); break;
	case 1: fd->cur = 0; break;           /* ^A */
	case 5: fd->cur = fd->text.len; break; /* ^E */
	case 21: delete_range(fd, 0, fd->cur); break;           /* ^U */
	case 11: delete_range(fd, fd->cur, fd->text.len); break; /* ^K */
	case 23:                                                 /* ^W */
		p = fd->cur;
		while (p > 0 && fd->text.buf[p - 1] == ' ')
			p--;
		while (p > 0 && fd->text.buf[p - 1] != ' ')
			p--;
		delete_range(fd, p, fd->cur);
		break;
	default: insert_cp(fd, ch); break;
	}
	return FORM_CONTINUE;
}

void form_draw(struct form *f, int rows, int cols)
{
	int lw = 0, want_h = (int)f->n + 4 + (f->error ? 2 : 0), cy = -1, cx = -1;
	struct rect r, in;

	for (size_t i = 0; i < f->n; i++) {
		int w = textsan_width(f->f[i].label);

		lw = w > lw ? w : lw;
	}
	if (lw > 24)
		lw = 24;
	r = modal_rect(rows, cols, want_h, cols > 90 ? 90 : cols);
	in = modal_draw(r, f->title, f->hint);
	for (size_t i = 0; i < f->n && (int)i + 1 < in.h; i++) {
		struct field *fd = &f->f[i];
		int y = in.y + 1 + (int)i, fx = in.x + 1 + lw + 2, fw = in.w - lw - 4;
		int curcol, start = 0;
		char save;
		const char *shown;

		draw_text_cut(y, in.x + 1, lw, fd->label,
			      i == f->focus ? THEME_ACCENT : THEME_DIALOG);
		if (fw <= 0)
			continue;
		draw_fill((struct rect){y, fx, 1, fw}, THEME_INPUT);
		if (i != f->focus) {
			/* From its start, a cut shown by "…" (issue 29: cut rows looked whole). */
			draw_text_cut(y, fx, fw, fd->text.buf, THEME_INPUT);
			continue;
		}
		/* Scroll the text so the cursor stays visible. */
		save = fd->text.buf[fd->cur];
		fd->text.buf[fd->cur] = '\0';
		curcol = textsan_width(fd->text.buf);
		fd->text.buf[fd->cur] = save;
		shown = fd->text.buf;
		while (curcol - start >= fw && *shown) {
			uint32_t cp;
			size_t len = textsan_decode(shown, strlen(shown), &cp);

			start += textsan_cpwidth(cp);
			shown += len;
		}
		draw_text(y, fx, fw, shown, THEME_INPUT);
		if (i == f->focus) {
			cy = y;
			cx = fx + curcol - start;
		}
	}
	if (f->error && in.h >= (int)f->n + 3)
		draw_text_cut(in.y + (int)f->n + 2, in.x + 1, in.w - 2, f->error, THEME_BAD);
	/* The caret is the terminal's cursor, shown in the focused field; the owner hides it
	 * again when the form closes (curs_set(0)). */
	if (cy >= 0) {
		move(cy, cx);
		curs_set(1);
	}
}
