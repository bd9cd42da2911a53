package scoring

import "github.com/yardstick-dev/yardstick/pkg/serve"

// testIdentity is the service as its tests serve it: cmd/'s identity (a main, not importable).
var testIdentity = serve.Identity{Name: "scoring", HTTPAddr: ":8080", GRPCAddr: ":9090", Settings: Settings}
