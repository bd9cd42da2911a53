package jsonwire

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestHasUnknown: on random messages of every contract type, with unknown bytes planted at a
// random depth or nowhere, the struct walk agrees with the protoreflect walk.
func TestHasUnknown(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	r := rand.New(rand.NewPCG(5, 6))
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1)
	planted := 0
	for i := 0; i < 3000; i++ {
		mt := contractMessages(t)[i%len(contractMessages(t))]
		m := mt.New()
		fill(r, m, 0)
		if r.IntN(2) == 0 {
			if target := randomMessageIn(r, m); target != nil {
				target.SetUnknown(unknown)
				planted++
			}
		}
		want := hasUnknownReflect(m)
		if got := c.HasUnknown(m.Interface()); got != want {
			t.Fatalf("%s: HasUnknown = %v; the protoreflect walk says %v", mt.Descriptor().FullName(), got, want)
		}
	}
	if planted < 1000 {
		t.Fatalf("planted unknown fields in %d messages; want many", planted)
	}
}

// randomMessageIn picks m or a message inside it.
func randomMessageIn(r *rand.Rand, m protoreflect.Message) protoreflect.Message {
	var all []protoreflect.Message
	var walk func(protoreflect.Message)
	walk = func(m protoreflect.Message) {
		all = append(all, m)
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil, fd.IsMap(): // the contract's maps hold numbers
			case fd.IsList():
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			default:
				walk(v.Message())
			}
			return true
		})
	}
	walk(m)
	return all[r.IntN(len(all))]
}
