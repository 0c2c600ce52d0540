# A service job that prints a counter every second.
#   troupe job run examples/hello.hcl
job "hello" {
  datacenters = ["dc1"]
  type        = "service"

  group "hello" {
    count = 1

    task "hello" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "i=0; while true; do i=$((i+1)); echo \"hello from troupe $i\"; sleep 1; done"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
