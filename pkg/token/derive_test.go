package token

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDeriveKeys: two reads of one keys dir derive the same keys (replicas agree); the newest
// kid's key signs and every key verifies; another purpose or another dir derives other keys; a
// dir the issuer would refuse is refused.
func TestDeriveKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeKey(t, dir, "20260101T000000Z-aaaaaaaa")
	one, err := DeriveKeys(dir, "page token")
	if err != nil {
		t.Fatal(err)
	}
	again, err := DeriveKeys(dir, "page token")
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Sign) != 32 || !bytes.Equal(one.Sign, again.Sign) || len(one.Verify) != 1 {
		t.Fatalf("two reads: %x and %x (%d to verify); want the same 32 bytes, 1 to verify", one.Sign, again.Sign, len(one.Verify))
	}
	other, err := DeriveKeys(dir, "something else")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other.Sign, one.Sign) {
		t.Error("two purposes derive the same key; want different keys")
	}
	writeKey(t, dir, "20270101T000000Z-bbbbbbbb") // a rotation: the newer key signs from now on
	rotated, err := DeriveKeys(dir, "page token")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(rotated.Sign, one.Sign) || len(rotated.Verify) != 2 || !bytes.Equal(rotated.Verify[0], rotated.Sign) || !bytes.Equal(rotated.Verify[1], one.Sign) {
		t.Errorf("after a rotation: sign %x, verify %x; want a new signer first and the old key still verifying", rotated.Sign, rotated.Verify)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.pem"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := DeriveKeys(dir, "page token"); err == nil {
		t.Error("a dir with a key file that does not load: nil error; want the issuer's error")
	}
	if _, err := DeriveKeys(t.TempDir(), "page token"); err == nil {
		t.Error("an empty dir: nil error; want an error")
	}
}
