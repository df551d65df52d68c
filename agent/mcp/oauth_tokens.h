/* oauth_tokens — what sign-in yields, per MCP server URL and issuer, kept in
 * $XDG_DATA_HOME/pevtui/mcp-auth.json (default ~/.local/share; the folder 0700, the file
 * 0600, replaced whole by rename). Every reader and writer holds the store's lock (flock
 * on mcp-auth.json.lock), so two pevtui processes refreshing the same token do not lose
 * the rotated refresh token. */
#ifndef PEVTUI_OAUTH_TOKENS_H
#define PEVTUI_OAUTH_TOKENS_H

#include <stdbool.h>

/* One sign-in: plain data, every string owned (NULL when unknown). Secrets inside: never
 * print, log or journal any of access_token, refresh_token, client_secret. */
struct oauth_grant {
	char *server_url; /* the MCP server's URL as configured */
	char *issuer;
	char *resource;
	char *token_endpoint;
	char *client_id;
	char *client_secret;
	char *auth_method; /* client_secret_basic, client_secret_post or none */
	char *access_token;
	char *refresh_token;
	char *scope; /* what was asked for (granted when the server said) */
	long long expires_at; /* seconds since the epoch; 0: unknown */
	long long issued_at;  /* when the access token came */
};

void oauth_grant_release(struct oauth_grant *g);
void oauth_grant_copy(struct oauth_grant *to, const struct oauth_grant *from);

/* The store's file (caller frees); NULL when neither XDG_DATA_HOME nor HOME is set. */
char *oauth_tokens_path(void);
/* Takes the store's lock (blocking); returns its descriptor, or -1 + *err. */
int oauth_tokens_lock(char **err);
void oauth_tokens_unlock(int fd);
/* With the lock held: the grant last saved for server_url (false when none). */
bool oauth_tokens_load(const char *server_url, struct oauth_grant *g);
/* With the lock held: saves g, replacing the entry of the same server URL and issuer.
 * false + *err. */
bool oauth_tokens_save(const struct oauth_grant *g, char **err);
/* With the lock held: forgets every entry of server_url; *removed counts them. */
bool oauth_tokens_remove(const char *server_url, int *removed, char **err);

#endif
