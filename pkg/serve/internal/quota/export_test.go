package quota

import dto "github.com/prometheus/client_model/go"

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

// Throttled is the count of the client's label and reason; 0 for an id the clients file does not
// register now, which is counted as OtherClient.
func (l *Limiter) Throttled(client, reason string) uint64 {
	if _, ok := l.cfg.Limits(client); !ok && client != OtherClient {
		return 0 // reading its series would create it
	}
	var m dto.Metric
	_ = l.metrics.WithLabelValues(client, reason).Write(&m)
	return uint64(m.GetCounter().GetValue())
}
