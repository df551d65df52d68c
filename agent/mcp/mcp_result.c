/* mcp_result — a tools/call result as text the model reads: text content joined, images,
 * audio and binary resources saved beneath the workspace (mcp-files/SERVER-TOOL-N.EXT, names
 * pevtui makes) and named, structuredContent as JSON unless a text block is the same JSON; then cleaned of
 * terminal controls and bounded. */
#include "config.h"

#include "mcp_result.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fdio.h"
#include "sandbox.h"
#include "textsan.h"
#include "xalloc.h"

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

/* Base64 (standard or URL alphabet, padding and blanks ignored) into out; false when a
 * character is none of these. */
static bool b64_decode(const char *s, struct strbuf *out)
{
	unsigned acc = 0;
	int bits = 0;

	for (; *s; s++) {
		int v;
		if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ')
			continue;
		v = b64_value((unsigned char)*s);
		if (v < 0)
			return false;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addc(out, (char)((acc >> bits) & 0xff));
		}
	}
	return true;
}

static const char *ext_for(const char *mime)
{
	static const struct {
		const char *mime, *ext;
	} map[] = {{"image/png", "png"},       {"image/jpeg", "jpg"}, {"image/gif", "gif"},
	           {"image/webp", "webp"},     {"audio/wav", "wav"},  {"audio/mpeg", "mp3"},
	           {"application/pdf", "pdf"}, {"text/plain", "txt"}, {"application/json", "json"}};

	for (size_t i = 0; mime && i < sizeof(map) / sizeof(*map); i++)
		if (!strcmp(mime, map[i].mime))
			return map[i].ext;
	return "bin";
}

/* A name made of the safe characters of s (for a file name). */
static char *safe_part(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	for (; s && *s && sb.len < 40; s++)
		strbuf_addc(&sb, (strchr("-_.", *s) || (*s >= '0' && *s <= '9') ||
		                  (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
		                     ? *s
		                     : '_');
	return strbuf_detach(&sb);
}

/* Saves base64 data beneath the workspace as mcp-files/SERVER-TOOL-N.EXT; the line the
 * model reads about it goes to out. The name is pevtui's, never the server's. */
static void save_blob(const char *server, unsigned long *files, int ws_fd, const char *tool,
                      const char *kind, const char *mime, const char *b64, struct strbuf *out)
{
	struct strbuf data = STRBUF_INIT;
	char *srv = safe_part(server), *tl = safe_part(tool), *rel, *err = NULL;
	int fd;

	strbuf_init(&data);
	rel = xasprintf("mcp-files/%s-%s-%lu.%s", srv, tl, ++*files, ext_for(mime));
	if (!b64 || !b64_decode(b64, &data)) {
		strbuf_addf(out, "[%s content that is not valid base64: not saved]\n", kind);
	} else if (ws_fd < 0 || (fd = sandbox_open(ws_fd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644,
	                                           true, &err)) < 0) {
		strbuf_addf(out, "[%s content (%zu bytes): could not be saved: %s]\n", kind,
		            data.len, err ? err : "no workspace");
	} else {
		bool ok = fd_write_all(fd, data.buf, data.len) == 0;
		close(fd);
		strbuf_addf(out, "[%s content (%s, %zu bytes) %s %s]\n", kind, mime ? mime : "?",
		            data.len, ok ? "saved as" : "could not be written to", rel);
	}
	free(err);
	free(rel);
	free(srv);
	free(tl);
	strbuf_release(&data);
}

/* Whether text block `t` is the same JSON as structuredContent (the spec's advice to
 * servers: send it serialized in a text block too). */
static bool carries(const char *t, const cJSON *structured)
{
	cJSON *j;
	bool same;

	if (!structured)
		return false;
	j = cJSON_Parse(t);
	same = j && cJSON_Compare(j, structured, true);
	cJSON_Delete(j);
	return same;
}

void mcp_result_render(const cJSON *res, const char *server, const char *tool, unsigned long *files,
                       int ws_fd, struct strbuf *out)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(res, "content"), *it;
	const cJSON *structured = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	bool said = false; /* a text block carries structuredContent's JSON already */

	cJSON_ArrayForEach(it, (cJSON_IsArray(content) ? content : NULL))
	{
		const char *type =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "type"));
		const char *mime =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "mimeType"));
		if (!type)
			continue;
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addc(out, '\n'); /* each part on lines of its own */
		if (!strcmp(type, "text")) {
			const char *t =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "text"));
			if (t) {
				strbuf_adds(out, t);
				said = said || carries(t, structured);
			}
		} else if (!strcmp(type, "image") || !strcmp(type, "audio")) {
			save_blob(
			    server, files, ws_fd, tool, type, mime,
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "data")),
			    out);
		} else if (!strcmp(type, "resource")) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "resource");
			const char *uri =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "uri"));
			const char *t =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "text"));
			const char *blob =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "blob"));
			strbuf_addf(out, "[resource %s]\n", uri ? uri : "(no uri)");
			if (t) {
				strbuf_adds(out, t);
				strbuf_addc(out, '\n');
			} else if (blob) {
				save_blob(server, files, ws_fd, tool, "resource",
				          cJSON_GetStringValue(
				              cJSON_GetObjectItemCaseSensitive(r, "mimeType")),
				          blob, out);
			}
		} else if (!strcmp(type, "resource_link")) {
			const char *uri =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "uri"));
			strbuf_addf(out, "[link to resource %s]\n", uri ? uri : "(no uri)");
		} else {
			strbuf_addf(out, "[content of an unknown kind: %.40s]\n", type);
		}
	}
	if (structured && !said) {
		char *j = cJSON_PrintUnformatted(structured);
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addc(out, '\n');
		strbuf_adds(out, j);
		free(j);
	}
}

/* Cleans terminal controls out (keeping lines and tabs) and cuts at max bytes. */
void mcp_result_bound(struct strbuf *out, size_t max)
{
	char *clean = textsan_clean(out->buf, out->len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	size_t n = strlen(clean);

	strbuf_reset(out);
	if (max && n > max) {
		size_t cut = max;
		while (cut > 0 && ((unsigned char)clean[cut] & 0xC0) == 0x80)
			cut--;
		strbuf_add(out, clean, cut);
		strbuf_addf(out, "\n[… %zu more bytes of this result were cut]", n - cut);
	} else {
		strbuf_add(out, clean, n);
	}
	free(clean);
}
