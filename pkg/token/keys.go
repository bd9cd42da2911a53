package token

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// signingKey is one Ed25519 key of the key set.
type signingKey struct {
	kid  string
	priv ed25519.PrivateKey
}

// keySet is an immutable set of keys: the greatest kid signs, every kid verifies.
type keySet struct {
	public    map[string]ed25519.PublicKey
	signer    signingKey
	jwks      []byte
	ephemeral bool
	verified  *verifiedCache
}

const (
	keyFileSuffix   = ".pem"
	maxKeyFileBytes = 64 << 10
	maxKeys         = 100
)

// kidPattern: a kid is a file name, so no path separators, and not hidden (Kubernetes mounts
// its own ..data entries beside the keys).
var kidPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)

// GenerateKey makes a new Ed25519 private key as PKCS#8 PEM with a kid of the form
// 20261122T101500Z-3f9a1c2b: a UTC timestamp, so that the newest key has the greatest kid and
// signs, then 32 random bits, so that two keys made in the same second differ.
func GenerateKey() (kid string, pemBytes []byte, err error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, fmt.Errorf("generate key: %w", err)
	}
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", nil, fmt.Errorf("generate key: %w", err)
	}
	kid = time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(suffix[:])
	return kid, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// parseKeyPEM reads a PKCS#8 Ed25519 private key, as written by GenerateKey or
// `openssl genpkey -algorithm ed25519`.
func parseKeyPEM(data []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return nil, errors.New("no PEM block")
	case block.Type == "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("encrypted keys are not supported")
	case block.Type != "PRIVATE KEY":
		return nil, fmt.Errorf("PEM block is %q; want PRIVATE KEY (PKCS#8)", block.Type)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not a PKCS#8 private key")
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%T is not an Ed25519 key", key)
	}
	return priv, nil
}

// loadKeys reads every <kid>.pem of dir. Names starting with "." and files not ending in .pem
// are skipped; a .pem file that does not load is an error, never silently skipped.
func loadKeys(dir string) (*keySet, error) {
	files, _, err := readKeyFiles(dir)
	return parseKeys(dir, files, err)
}

// keyFile is one <kid>.pem file as read, not yet parsed.
type keyFile struct {
	kid, path string
	data      []byte
}

// readKeyFiles reads the <kid>.pem files of dir; sum fingerprints their names and contents, so
// that a reload can tell an unchanged dir without parsing it again. On an error, files holds
// those that were read, so that their problems are reported too.
func readKeyFiles(dir string) ([]keyFile, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	entries, err := readDir(dir)
	if err != nil {
		return nil, sum, fmt.Errorf("keys dir: %w", err)
	}
	var files []keyFile
	var errs []error
	h := sha256.New()
	for _, e := range entries {
		name := e.Name()
		kid, isPEM := strings.CutSuffix(name, keyFileSuffix)
		if strings.HasPrefix(name, ".") || !isPEM {
			continue
		}
		path := filepath.Join(dir, name)
		if !kidPattern.MatchString(kid) {
			errs = append(errs, fmt.Errorf("%s: the key id (file name without .pem) must be 1 to 128 of A-Z a-z 0-9 . _ -", path))
			continue
		}
		data, err := readCapped(path, maxKeyFileBytes)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
		files = append(files, keyFile{kid: kid, path: path, data: data})
	}
	if err := errors.Join(errs...); err != nil {
		return files, sum, err
	}
	h.Sum(sum[:0])
	return files, sum, nil
}

// parseKeys makes the key set of the files read from dir; readErr is what reading them found,
// reported with their own problems.
func parseKeys(dir string, files []keyFile, readErr error) (*keySet, error) {
	var keys []signingKey
	errs := []error{readErr}
	for _, f := range files {
		priv, err := parseKeyPEM(f.data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, err))
			continue
		}
		keys = append(keys, signingKey{kid: f.kid, priv: priv})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	switch {
	case len(keys) == 0:
		return nil, fmt.Errorf("keys dir %s: no <kid>.pem key files", dir)
	case len(keys) > maxKeys:
		return nil, fmt.Errorf("keys dir %s: %d keys; at most %d", dir, len(keys), maxKeys)
	}
	return newKeySet(keys, false)
}

// ephemeralKeys makes a one-key set that lives as long as the process (dev mode).
func ephemeralKeys() (*keySet, error) {
	kid, pemBytes, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	priv, err := parseKeyPEM(pemBytes)
	if err != nil {
		return nil, err
	}
	return newKeySet([]signingKey{{kid: "dev-" + kid, priv: priv}}, true)
}

// jwk is one JSON Web Key (RFC 8037: OKP / Ed25519).
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

func newKeySet(keys []signingKey, ephemeral bool) (*keySet, error) {
	slices.SortFunc(keys, func(a, b signingKey) int { return strings.Compare(b.kid, a.kid) }) // newest first
	ks := &keySet{public: make(map[string]ed25519.PublicKey, len(keys)), signer: keys[0], ephemeral: ephemeral, verified: newVerifiedCache()}
	set := struct {
		Keys []jwk `json:"keys"`
	}{}
	for _, k := range keys {
		pub := k.priv.Public().(ed25519.PublicKey)
		ks.public[k.kid] = pub
		set.Keys = append(set.Keys, jwk{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub),
			Kid: k.kid, Alg: "EdDSA", Use: "sig"})
	}
	var err error
	if ks.jwks, err = json.Marshal(set); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	return ks, nil
}
