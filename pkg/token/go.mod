module github.com/yardstick-dev/yardstick/pkg/token

go 1.25.0
