# The hostpath CSI plugin (cmd/troupe-csi-hostpath) on every client, as one
# monolith instance per node: controller and node services in one process.
# The client gives the task a directory at mount_dir, finds csi.sock there,
# fingerprints the plugin and keeps probing it.
#   go build -o bin/ ./cmd/troupe-csi-hostpath   # and put bin/ on the client's PATH
#   bin/troupe job run examples/csi/hostpath-plugin.hcl
#   bin/troupe plugin status hostpath
job "csi-hostpath" {
  datacenters = ["dc1"]
  type        = "system"

  group "plugin" {
    task "plugin" {
      driver = "exec"

      config {
        command = "troupe-csi-hostpath"
        args = [
          "-endpoint", "unix:///csi/csi.sock",
          "-root", "/var/lib/troupe-hostpath",
          "-node-id", "${node.unique.id}",
          "-mode", "monolith",
        ]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
