module github.com/yardstick-dev/yardstick/internal

go 1.25.0
