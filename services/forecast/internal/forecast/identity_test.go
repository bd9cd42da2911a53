package forecast

import "github.com/yardstick-dev/yardstick/pkg/serve"

// testIdentity is the service as its tests serve it: cmd/'s identity (a main, not importable).
var testIdentity = serve.Identity{Name: "forecast", HTTPAddr: ":8081", GRPCAddr: ":9091", Settings: Settings}
