package token

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// NewSecret returns a fresh client secret: 256 random bits in base64url (43 characters).
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// GenerateSecret returns a fresh client secret (as NewSecret) and its hash, a salted SHA-256
// in PHC form ($sha256$salt$hash). The fast hash is safe only because the secret is 256
// random bits, which is why no function hashes a secret given from outside that way.
func GenerateSecret() (secret, secretHash string, err error) {
	if secret, err = NewSecret(); err != nil {
		return "", "", err
	}
	h, err := hashFast(secret)
	if err != nil {
		return "", "", err
	}
	return secret, h.String(), nil
}

// ClientEntry renders one client as a YAML list item indented to go under "clients:" in the
// clients file. It is checked by the file's own loader, so what it returns loads.
func ClientEntry(clientID, secretHash string, services, permissions, programs []string) ([]byte, error) {
	type entry struct {
		ClientID    string   `yaml:"clientId"`
		SecretHash  string   `yaml:"secretHash"`
		Services    []string `yaml:"services,flow"`
		Permissions []string `yaml:"permissions,flow"`
		Programs    []string `yaml:"programs,flow,omitempty"`
	}
	out, err := yaml.Marshal([]entry{{clientID, secretHash, services, permissions, programs}})
	if err != nil {
		return nil, fmt.Errorf("client entry: %w", err)
	}
	indented := "  " + strings.ReplaceAll(strings.TrimSuffix(string(out), "\n"), "\n", "\n  ") + "\n"
	if _, err := parseClients("", []byte("clients:\n"+indented)); err != nil {
		return nil, fmt.Errorf("client entry: %w", err)
	}
	return []byte(indented), nil
}
