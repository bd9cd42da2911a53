package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"slices"
	"strings"
)

// DerivedKeys are keys for one purpose derived from the signing keys of a keys dir, so that
// every replica that shares the dir derives the same ones and nothing new has to be distributed:
// Sign is derived from the key that signs tokens (the greatest kid), Verify from every key of the
// dir, Sign first. A key derived for one purpose says nothing of the signing key or of the keys of
// another purpose (each is HMAC-SHA256 of the purpose under the key's seed).
type DerivedKeys struct {
	Sign   []byte
	Verify [][]byte
}

// DeriveKeys reads the keys dir as the issuer does (the same files, the same errors) and derives
// the keys for purpose from them.
func DeriveKeys(dir, purpose string) (DerivedKeys, error) {
	files, _, err := readKeyFiles(dir)
	if _, err := parseKeys(dir, files, err); err != nil {
		return DerivedKeys{}, err
	}
	slices.SortFunc(files, func(a, b keyFile) int { return strings.Compare(b.kid, a.kid) }) // the signer first
	var out DerivedKeys
	for _, f := range files {
		priv, err := parseKeyPEM(f.data)
		if err != nil { // parseKeys took it: cannot happen
			return DerivedKeys{}, err
		}
		out.Verify = append(out.Verify, derive(priv.Seed(), purpose))
	}
	out.Sign = out.Verify[0]
	return out, nil
}

func derive(seed []byte, purpose string) []byte {
	m := hmac.New(sha256.New, seed)
	m.Write([]byte("yardstick derived key\x00" + purpose))
	return m.Sum(nil)
}
