module github.com/yardstick-dev/yardstick/pkg/measure

go 1.25.0
