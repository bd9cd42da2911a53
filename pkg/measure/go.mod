module github.com/yardstick-dev/yardstick/pkg/measure

go 1.26.0

require (
	github.com/yardstick-dev/yardstick/internal v0.0.0
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/sys v0.49.0

replace github.com/yardstick-dev/yardstick/internal => ../../internal
