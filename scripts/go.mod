module github.com/yardstick-dev/yardstick/scripts

go 1.26.0
