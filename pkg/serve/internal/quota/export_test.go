package quota

// Outcome is what the limits say of one unary call, as the gate composes them (internal/gate):
// its rate first, then its concurrency.
type Outcome struct {
	Policy, State string
	Err           error
	*Slot
}

// Admit decides one unary call of client as the gate does: Rate, then Acquire if allowed.
func (l *Limiter) Admit(client string) (out Outcome) {
	if out.Policy, out.State, out.Err = l.Rate(client); out.Err == nil {
		out.Slot, out.Err = l.Acquire(client)
	}
	return out
}
