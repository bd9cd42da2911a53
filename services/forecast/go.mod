module github.com/yardstick-dev/yardstick/services/forecast

go 1.25.0
