module github.com/yardstick-dev/yardstick/scripts

go 1.26.0

require github.com/yardstick-dev/yardstick/internal v0.0.0

replace github.com/yardstick-dev/yardstick/internal => ../internal
