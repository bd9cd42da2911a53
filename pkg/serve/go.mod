module github.com/yardstick-dev/yardstick/pkg/serve

go 1.25.0
