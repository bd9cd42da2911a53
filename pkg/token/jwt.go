package token

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Token is what /authToken answers.
type Token struct {
	AccessToken string
	ExpiresIn   int64    // seconds
	Scope       []string // the permissions the token carries (OAuth 2.0's scope)
}

// Claims are the verified facts of a token.
type Claims struct {
	ClientID  string // sub
	Service   string // aud
	ID        string // jti
	Scope     []string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Programs are the content programs the client sees besides shared content, as the clients
	// file in force when the token was verified says (never the token's: a client taken out of
	// a program loses it at its next request); AllPrograms alone is every program, none is shared
	// content only.
	Programs []string

	fingerprint string // cfp: the client's secret hash when the token was issued
}

// Allows reports whether the scope holds permission or PermAll.
func (c Claims) Allows(permission string) bool {
	return slices.Contains(c.Scope, PermAll) || slices.Contains(c.Scope, permission)
}

// Require is nil when the scope allows permission, else an error wrapping ErrPermissionDenied
// that names the permission.
func (c Claims) Require(permission string) error {
	if c.Allows(permission) {
		return nil
	}
	return fmt.Errorf("%w: the token lacks %q", ErrPermissionDenied, permission)
}

// MaxTokenLen caps what Verify parses; our tokens are about 400 bytes.
const MaxTokenLen = 8 << 10

// jwtClaims is the JSON payload of our tokens.
type jwtClaims struct {
	jwt.RegisteredClaims
	Scope scope `json:"scope"`
	// Fingerprint names the client's secret hash at issue (clients.go), so that re-keying a
	// client voids its tokens. It is a truncated SHA-256 of the hash string: it tells nothing
	// about the secret.
	Fingerprint string `json:"cfp"`
}

// Validate adds to jwt's checks (which require aud, iss and exp): sub, jti, iat and cfp are
// required too, and aud names one service only (a token good at both services is not one we
// issue).
func (c jwtClaims) Validate() error {
	switch {
	case c.Subject == "", c.ID == "", c.IssuedAt == nil, c.Fingerprint == "":
		return jwt.ErrTokenRequiredClaimMissing
	case len(c.Audience) > 1:
		return jwt.ErrTokenInvalidAudience
	}
	return nil
}

// scope is issued as a space-separated string (as OAuth 2.0 writes scopes) and read from
// either such a string or an array of strings.
type scope []string

func (s scope) MarshalJSON() ([]byte, error) { return json.Marshal(strings.Join(s, " ")) }

func (s *scope) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = strings.Fields(str)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("scope must be a string or an array of strings")
	}
	*s = list
	return nil
}

// issue signs a token for client c on service with the newest key.
func (i *Issuer) issue(ks *keySet, c *client, service string) (Token, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Token{}, fmt.Errorf("token: issue: %w", err)
	}
	now := i.opts.Now()
	claims := jwtClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.opts.Issuer,
			Subject:   c.id,
			Audience:  jwt.ClaimStrings{service},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(i.opts.TTL)),
			ID:        base64.RawURLEncoding.EncodeToString(id[:]),
		},
		Scope:       c.scopes[service],
		Fingerprint: c.fingerprint,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	t.Header["kid"] = ks.signer.kid
	signed, err := t.SignedString(ks.signer.priv)
	if err != nil {
		return Token{}, fmt.Errorf("token: issue: %w", err)
	}
	return Token{AccessToken: signed, ExpiresIn: int64(i.opts.TTL / time.Second), Scope: slices.Clone(claims.Scope)}, nil
}

var (
	errNoKid      = errors.New("no kid")
	errUnknownKid = errors.New("unknown kid")
	errCrit       = errors.New("crit header")
)

// publicKey is the jwt.Keyfunc: the header's kid must name a key of the set. The algorithm was
// already pinned to EdDSA by the parser, and jwt checks that the key is an ed25519.PublicKey.
// A crit header is refused: it lists extensions the verifier must understand, we understand
// none, and RFC 7515 §4.1.11 then requires rejecting the token (golang-jwt does not check it).
func (ks *keySet) publicKey(t *jwt.Token) (any, error) {
	if _, ok := t.Header["crit"]; ok {
		return nil, errCrit
	}
	kid, ok := t.Header["kid"].(string)
	if !ok || kid == "" {
		return nil, errNoKid
	}
	pub, ok := ks.public[kid]
	if !ok {
		return nil, errUnknownKid
	}
	return ed25519.PublicKey(pub), nil
}

// Verify checks a token for service: EdDSA signature by a key of the current set (kid
// required, no crit header), iss, aud equal to service, exp (required), nbf and iat within the
// leeway, and sub, jti, iat and cfp present. Then it checks the token's client against the
// current clients (a cached verification too): a removed or re-keyed client, or one re-added
// after the token was issued, is not authenticated; a client whose permissions or services
// were narrowed gets claims with only what it still has. Every failure is an error wrapping
// ErrNotAuthenticated with a fixed reason; nothing of the token is echoed.
func (i *Issuer) Verify(token, service string) (Claims, error) {
	switch {
	case token == "":
		return Claims{}, notAuthenticated(ErrTokenUnreadable, "no token")
	case len(token) > MaxTokenLen:
		return Claims{}, notAuthenticated(ErrTokenUnreadable, "token too long")
	case !knownService(service):
		return Claims{}, notAuthenticated(ErrTokenUnreadable, "unknown service")
	}
	st := i.state.Load()
	ks := st.keys
	key := verifiedKey{issuer: i.opts.Issuer, service: service, token: token}
	if claims, ok := ks.verified.get(key); ok {
		if !stillValid(claims, i.opts.Now(), i.opts.Leeway) {
			return Claims{}, notAuthenticated(ErrTokenExpired, "token expired")
		}
		return st.clients.current(claims)
	}
	var c jwtClaims
	if _, err := i.parsers[service].ParseWithClaims(token, &c, ks.publicKey); err != nil {
		kind, why := reason(err)
		if errors.Is(err, errUnknownKid) && i.forOtherService(token, service) {
			// Services that do not share their keys (dev mode: each makes its own) cannot verify
			// each other's tokens; the payload still says which service it was meant for.
			kind, why = ErrTokenOtherService, "unknown key id; the unverified aud names another service"
		}
		return Claims{}, notAuthenticated(kind, why)
	}
	claims := Claims{
		ClientID:    c.Subject,
		Service:     service,
		ID:          c.ID,
		Scope:       c.Scope,
		IssuedAt:    c.IssuedAt.Time,
		ExpiresAt:   c.ExpiresAt.Time,
		fingerprint: c.Fingerprint,
	}
	ks.verified.put(key, claims)
	return st.clients.current(claims)
}

// current checks verified claims against the clients as they are now and keeps only the
// permissions the client still has on the token's service.
func (reg *registry) current(claims Claims) (Claims, error) {
	c := reg.byID[claims.ClientID]
	switch {
	case c == nil:
		return Claims{}, notAuthenticated(ErrTokenRevoked, "client no longer registered")
	case c.fingerprint != claims.fingerprint:
		return Claims{}, notAuthenticated(ErrTokenRevoked, "client secret changed")
	case claims.IssuedAt.Before(reg.since[c.id].Truncate(time.Second)):
		// iat has whole seconds: a token of the same second as the re-registration stands.
		return Claims{}, notAuthenticated(ErrTokenRevoked, "token predates the client's registration")
	}
	claims.Scope = narrow(claims.Scope, c.scopes[claims.Service])
	claims.Programs = c.programs
	return claims, nil
}

// narrow is the part of a token's scope that the client still holds: everything if it holds
// PermAll, what it holds if the token had PermAll, else the intersection. It returns scope
// itself (no copy) when nothing was cut, the common case.
func narrow(scope, now []string) []string {
	if slices.Contains(now, PermAll) {
		return scope
	}
	if slices.Contains(scope, PermAll) {
		return slices.Clone(now)
	}
	kept := 0
	for _, p := range scope {
		if slices.Contains(now, p) {
			kept++
		}
	}
	if kept == len(scope) {
		return scope
	}
	out := make([]string, 0, kept)
	for _, p := range scope {
		if slices.Contains(now, p) {
			out = append(out, p)
		}
	}
	return out
}

// forOtherService reports whether token, which could not be verified, says (unverified) that this
// issuer issued it for a service other than service. It only chooses the words of a refusal:
// nothing is granted on what it reads.
func (i *Issuer) forOtherService(token, service string) bool {
	var c jwtClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil || c.Issuer != i.opts.Issuer || len(c.Audience) != 1 {
		return false
	}
	aud := c.Audience[0]
	return aud != service && knownService(aud)
}

// reason maps a parse error to its kind and a fixed phrase; jwt's own messages may quote the
// input. An error that is several at once (jwt joins the claims' failures) takes the first row's.
func reason(err error) (error, string) {
	for _, r := range []struct {
		err    error
		kind   error
		reason string
	}{
		{errNoKid, ErrTokenUnreadable, "no key id"},
		{errUnknownKid, ErrTokenUnreadable, "unknown key id"},
		{errCrit, ErrTokenUnreadable, "unsupported critical header"},
		{jwt.ErrTokenMalformed, ErrTokenUnreadable, "malformed token"},
		{jwt.ErrTokenSignatureInvalid, ErrTokenUnreadable, "invalid signature or algorithm"},
		{jwt.ErrTokenExpired, ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, ErrTokenUnreadable, "token not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, ErrTokenUnreadable, "token issued in the future"},
		{jwt.ErrTokenInvalidAudience, ErrTokenOtherService, "token is for another service"},
		{jwt.ErrTokenInvalidIssuer, ErrTokenUnreadable, "wrong issuer"},
		{jwt.ErrTokenRequiredClaimMissing, ErrTokenUnreadable, "missing claim"},
	} {
		if errors.Is(err, r.err) {
			return r.kind, r.reason
		}
	}
	return ErrTokenUnreadable, "invalid token"
}
