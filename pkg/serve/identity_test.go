package serve

// The identities the frame's tests serve under: the names and default ports of the two services
// whose contracts the tests' fakes serve (the services own theirs, in their mains).
var (
	scoringID  = Identity{Name: "scoring", HTTPAddr: ":8080", GRPCAddr: ":9090"}
	forecastID = Identity{Name: "forecast", HTTPAddr: ":8081", GRPCAddr: ":9091"}
)

// identityOf is the test identity named name, or one of that name on scoring's ports.
func identityOf(name string) Identity {
	if name == forecastID.Name {
		return forecastID
	}
	id := scoringID
	id.Name = name
	return id
}
