module github.com/yardstick-dev/yardstick/proto

go 1.25.0
