package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// tokens is the bearer token: the one given, or one from the service's /authToken, fetched
// again when the service says it no longer holds (a run longer than the token's life).
type tokens struct {
	c      config
	client *http.Client

	mu    sync.Mutex
	token string
}

func newTokens(c config, client *http.Client) *tokens {
	return &tokens{c: c, client: client, token: c.token}
}

func (t *tokens) canRefresh() bool { return t.c.clientID != "" && t.c.clientSecret != "" }

func (t *tokens) current() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token
}

// get returns the token, fetching one when there is none or when stale is the one in use (so
// that several streams refused at once fetch it once).
func (t *tokens) get(ctx context.Context, stale string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && (stale == "" || t.token != stale || !t.canRefresh()) {
		return t.token, nil
	}
	u, err := url.Parse(t.c.url)
	if err != nil {
		return "", err
	}
	u.Path, u.RawQuery = "/authToken", ""
	body, _ := json.Marshal(map[string]string{"clientId": t.c.clientID, "clientSecret": t.c.clientSecret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("getting a token: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("getting a token: %s answered %d: %s", u, resp.StatusCode, bytes.TrimSpace(b))
	}
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal(b, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("getting a token: %s answered no accessToken", u)
	}
	t.token = tok.AccessToken
	return t.token, nil
}
