module github.com/yardstick-dev/yardstick/deploy

go 1.25.0
