module github.com/yardstick-dev/yardstick/pkg/token

go 1.25.0

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	golang.org/x/crypto v0.55.0
	gopkg.in/yaml.v3 v3.0.1
)

require golang.org/x/sys v0.47.0 // indirect
