package scoring

import (
	"flag"
	"testing"
)

// The demo differential test: the content bundle, not the code, decides what is measured, and
// with the embedded demonstration bundle every answer must stay byte for byte what it was before
// frameworks came from the bundle. testdata/demo/requests.txt holds requests on every scoring
// and catalog path, valid and refused ones whose messages name the demo's frameworks, id rules
// and missing parts; testdata/demo/answers.txt holds the answers of the build before that
// change (status and body), with one line since changed on purpose: request 17's fit of a
// partial credit item moved in its 15th digit when partial credit sums became polynomials in
// e^x, and again (outfit 204.73914600069907 → …944) when the expected score became Σ j·t_j/s0
// above an information of 0.01·M (estimates within 1e-12 logits of the exact ones;
// TestPCMDifferential holds them). apiVersion and the bundle hash are not compared: the first
// is the build's, the second the demo files' fingerprint, which changes when the files gain a
// column.
var updateDemo = flag.Bool("update-demo", false, "rewrite testdata/demo/answers.txt from this build")

func TestDemoDifferential(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.CheckCorpus(t, "testdata/demo", *updateDemo)
}
