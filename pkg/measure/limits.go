package measure

// Domain limits: the largest values the method is used for here. The services answer a named 400
// beyond them, so that absurd inputs (an ability of 3·10⁹, a prior from 10²⁰ days ago) can neither
// overflow the arithmetic nor come back as confident-looking numbers.
const (
	// MaxAbsMeasure bounds abilities, difficulties and cut levels, in measure units. The
	// published scales span about -400 to 2000; ten thousand leaves room for any rescaling.
	MaxAbsMeasure = 10000
	// MaxUncertainty bounds prior uncertainties, test uncertainties and scale SEMs.
	MaxUncertainty = 10000
	// MaxElapsedDays is ten years: an older prior says nothing about a student today; score
	// without one.
	MaxElapsedDays = 3653
)

// Finite reports whether every value is a number (not NaN, not infinite): what a service checks
// an answer with before it goes on the wire.
func Finite(vs ...float64) bool {
	for _, v := range vs {
		if !finite(v) {
			return false
		}
	}
	return true
}
