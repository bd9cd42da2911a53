package token

import (
	"regexp"
	"strings"
	"testing"
)

func TestHashSecretRoundTrip(t *testing.T) {
	t.Parallel()
	h, err := HashSecret("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\$argon2id\$v=19\$m=65536,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`).MatchString(h) {
		t.Errorf("got %q; want $argon2id$v=19$m=65536,t=2,p=1$<16-byte salt>$<32-byte hash>", h)
	}
	for _, tc := range []struct {
		secret string
		want   bool
	}{{"s3cret", true}, {"s3cret ", false}, {"S3cret", false}, {"", false}} {
		got, err := VerifySecret(h, tc.secret)
		if err != nil || got != tc.want {
			t.Errorf("VerifySecret(%q): got %v, %v; want %v, nil", tc.secret, got, err, tc.want)
		}
	}
	h2, _ := HashSecret("s3cret")
	if h2 == h {
		t.Errorf("two hashes of one secret are equal; want fresh salts")
	}
	if _, err := HashSecret(""); err == nil {
		t.Errorf("HashSecret(\"\"): got nil error; want an error")
	}
}

// TestVerifySecretUsesStoredParameters: a hash made with other parameters still verifies.
func TestVerifySecretUsesStoredParameters(t *testing.T) {
	t.Parallel()
	p := argonParams{memory: 256, time: 3, threads: 2, saltLen: 8, keyLen: 20}
	h, err := hashWithParams("abc", p)
	if err != nil {
		t.Fatal(err)
	}
	s := h.String()
	if !strings.HasPrefix(s, "$argon2id$v=19$m=256,t=3,p=2$") {
		t.Fatalf("got %q; want the parameters m=256,t=3,p=2", s)
	}
	if ok, err := VerifySecret(s, "abc"); !ok || err != nil {
		t.Errorf("got %v, %v; want true, nil", ok, err)
	}
}

func TestParsePHCRejects(t *testing.T) {
	t.Parallel()
	const salt, key = "0s6g45k8hdN2JVqowUUaNQ", "Q49ggUpqk2hIwUXRf5smywPzaIIMp2SBlpDehkVKt2c"
	cases := []struct{ name, phc, want string }{
		{"empty", "", "not a PHC string"},
		{"plain secret", "hunter2", "not a PHC string"},
		{"argon2i", "$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key, "algorithm must be argon2id"},
		{"old version", "$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + key, "version must be v=19"},
		{"no version", "$argon2id$m=64,t=1,p=1$" + salt + "$" + key, "not a PHC string"},
		{"two parameters", "$argon2id$v=19$m=64,t=1$" + salt + "$" + key, "m=...,t=...,p=..."},
		{"parameters out of order", "$argon2id$v=19$t=1,m=64,p=1$" + salt + "$" + key, "in that order"},
		{"memory beyond the cap", "$argon2id$v=19$m=262145,t=1,p=1$" + salt + "$" + key, "m must be an integer from 1 to 262144"},
		{"passes beyond the cap", "$argon2id$v=19$m=64,t=9,p=1$" + salt + "$" + key, "t must be an integer from 1 to 8"},
		{"zero passes", "$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key, "t must be an integer from 1 to 8"},
		{"lanes beyond the cap", "$argon2id$v=19$m=1024,t=1,p=17$" + salt + "$" + key, "p must be an integer from 1 to 16"},
		{"zero lanes", "$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key, "p must be an integer from 1 to 16"},
		{"negative memory", "$argon2id$v=19$m=-1,t=1,p=1$" + salt + "$" + key, "m must be"},
		{"memory below 8 KiB a lane", "$argon2id$v=19$m=15,t=1,p=2$" + salt + "$" + key, "at least 8 KiB per lane"},
		{"short salt", "$argon2id$v=19$m=64,t=1,p=1$AAAA$" + key, "salt must be"},
		{"salt not base64", "$argon2id$v=19$m=64,t=1,p=1$!!!!!!!!!!!!$" + key, "salt must be"},
		{"padded salt", "$argon2id$v=19$m=64,t=1,p=1$" + salt + "==$" + key, "salt must be"},
		{"short hash", "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$AAAA", "hash must be"},
		{"trailing field", "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$x", "not a PHC string"},
		{"sha256 with parameters", "$sha256$v=1$" + salt + "$" + key, "not a PHC string"},
		{"sha256 short salt", "$sha256$AAAA$" + key, "salt must be"},
		{"sha256 hash of 31 bytes", "$sha256$" + salt + "$" + key[:41], "sha256 hash must be unpadded base64 of 32 bytes"},
		{"sha256 hash not base64", "$sha256$" + salt + "$" + strings.Repeat("!", 43), "sha256 hash must be"},
		{"sha512", "$sha512$" + salt + "$" + key, "algorithm must be argon2id or sha256"},
		{"sha256 without hash", "$sha256$" + salt, "not a PHC string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok, err := VerifySecret(tc.phc, "anything")
			if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want false and an error containing %q", ok, err, tc.want)
			}
			if strings.Contains(err.Error(), salt) || strings.Contains(err.Error(), key) {
				t.Errorf("the error %q quotes the hash", err)
			}
		})
	}
}

// TestGenerateSecret: a generated secret gets the fast hash, which verifies it and nothing else.
func TestGenerateSecret(t *testing.T) {
	t.Parallel()
	secret, hash, err := GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != 43 || !strings.HasPrefix(hash, "$sha256$") {
		t.Fatalf("got secret of %d characters and hash %q; want 43 characters and a $sha256$ hash", len(secret), hash)
	}
	h, err := parsePHC(hash)
	if err != nil || h.slow() || len(h.salt) != 16 || len(h.key) != 32 {
		t.Fatalf("parsed %+v, %v; want a fast hash with a 16-byte salt and 32-byte digest", h, err)
	}
	if h.String() != hash {
		t.Errorf("round trip: got %q; want %q", h.String(), hash)
	}
	for _, tc := range []struct {
		secret string
		want   bool
	}{{secret, true}, {secret[:42], false}, {secret + "x", false}, {"", false}} {
		if got, err := VerifySecret(hash, tc.secret); got != tc.want || err != nil {
			t.Errorf("VerifySecret(%q): got %v, %v; want %v, nil", tc.secret, got, err, tc.want)
		}
	}
	_, again, _ := GenerateSecret()
	if again == hash {
		t.Error("two generated hashes are equal; want fresh salts and secrets")
	}
	if d := demoHash(); d.slow() != true || !d.matches(DevClientSecret) || d.String() != demoHash().String() {
		t.Errorf("demo hash %v: want argon2id of the demo secret, the same in every process", d)
	}
}
