package token

// Limits are one client's share of a service (docs/operations.md, "A fair share for every
// client"), from the limits entry of its clients file entry. A zero field was not set there and
// takes the service's default; the frame (pkg/serve) enforces them, this package only reads them.
type Limits struct {
	// Rate is the requests per second the client may sustain on one service, all replicas
	// together; 0: not set.
	Rate float64
	// Burst is the most requests at once after the client idled; 0: not set.
	Burst int
	// Concurrency is the most calls of the client in progress at once on one replica; 0: not set.
	Concurrency int
}

// Limits are the limits the clients file in force sets for clientID, and whether the file
// registers it (the dev-mode demo client is registered and sets none). A reload that changes
// them shows at the next call.
func (i *Issuer) Limits(clientID string) (Limits, bool) {
	c := i.state.Load().clients.byID[clientID]
	if c == nil {
		return Limits{}, false
	}
	return c.limits, true
}

// ClientIDs are the ids of the clients registered now, in no particular order: the values a
// metric's client label may take, so that made-up ids cannot grow it.
func (i *Issuer) ClientIDs() []string {
	byID := i.state.Load().clients.byID
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	return ids
}
