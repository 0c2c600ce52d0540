job "hello" {
  namespace   = "prod"
  region      = "eu"
  datacenters = ["dc1", "dc2"]
  type        = "service"
  priority    = 70

  meta {
    owner = "me"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    operator  = "="
    value     = "linux"
  }

  constraint {
    distinct_hosts = true
  }

  group "web" {
    count = 2

    constraint {
      attribute = "${meta.rack}"
      value     = "r1"
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    reschedule {
      attempts       = 3
      interval       = "1h"
      delay          = "10s"
      delay_function = "exponential"
      max_delay      = "5m"
      unlimited      = false
    }

    migrate {
      max_parallel     = 1
      health_check     = "checks"
      min_healthy_time = "10s"
      healthy_deadline = "5m"
    }

    disconnect {
      lost_after           = "1h"
      stop_on_client_after = "30s"
      replace              = true
      reconcile            = "best_score"
    }

    stop_after_client_disconnect = "30s"

    network {
      mode = "bridge"
      port "http" {
        static = 8080
        to     = 80
      }
      port "db" {
        to = 5432
      }
    }

    volume "data" {
      type            = "csi"
      source          = "vol1"
      access_mode     = "multi-node-multi-writer"
      attachment_mode = "file-system"
      read_only       = false
      per_alloc       = false
    }

    meta {
      tier = "front"
    }

    task "server" {
      driver = "exec"
      user   = "nobody"
      leader = false

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo hi; sleep 1; done"]
      }

      env {
        GREETING = "hello"
        ALLOC    = "${NOMAD_ALLOC_ID}"
      }

      resources {
        cpu        = 200
        memory     = 128
        memory_max = 256
        device "nvidia/gpu" {
          count = 2
          constraint {
            attribute = "${device.attr.memory_mib}"
            operator  = ">="
            value     = "40000"
          }
          affinity {
            attribute = "${device.model}"
            value     = "H200"
            weight    = 50
          }
        }
      }

      restart {
        attempts = 1
        interval = "1h30m"
        delay    = "20s"
        mode     = "delay"
      }

      kill_timeout = "10s"
      kill_signal  = "SIGINT"

      meta {
        role = "api"
      }

      constraint {
        attribute = "${node.unique.name}"
        operator  = "regexp"
        value     = "^web-"
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
        read_only   = true
      }

      logs {
        max_files     = 5
        max_file_size = 20
      }
    }
  }
}
