// Tcl modulefiles for Environment Modules (Lmod reads them too).

#include "modules/render.hpp"

namespace cudaenv::modules {

namespace {

// The same check as the Lua one. Only digits and dots are taken from the files it reads.
constexpr const char* tcl_driver_check = R"tcl(proc cudaenv_older {a b} {
  set x [regexp -all -inline {[0-9]+} $a]
  set y [regexp -all -inline {[0-9]+} $b]
  set n [expr {max([llength $x], [llength $y])}]
  for {set i 0} {$i < $n} {incr i} {
    set p 0; set q 0
    if {$i < [llength $x]} { scan [lindex $x $i] %d p }
    if {$i < [llength $y]} { scan [lindex $y $i] %d q }
    if {$p != $q} { return [expr {$p < $q}] }
  }
  return 0
}

proc cudaenv_driver {} {
  set root ""
  if {[info exists ::env(CUDAENV_SYSROOT)]} { set root $::env(CUDAENV_SYSROOT) }
  foreach file {/sys/module/nvidia/version /proc/driver/nvidia/version} {
    if {[file readable $root$file]} {
      set channel [open $root$file r]
      set text [read $channel 4096]
      close $channel
      if {[regexp {[0-9]+\.[0-9]+(\.[0-9]+)*} $text found]} { return $found }
    }
  }
  return ""
}

if {[module-info mode load] && $lowest ne ""} {
  set driver [cudaenv_driver]
  if {$driver eq ""} {
    puts stderr "$name: no NVIDIA driver on this node: loaded for building only (running needs driver >= $lowest)"
  } elseif {[cudaenv_older $driver $lowest]} {
    set advice "no installed toolkit works with it: upgrade the driver to >= $lowest"
    foreach t $fallbacks {
      if {![cudaenv_older $driver [lindex $t 1]]} {
        set advice "the newest installed toolkit that works here is cuda/[lindex $t 0]"
        break
      }
    }
    puts stderr "$name needs NVIDIA driver $floor; this node's driver is $driver: $advice"
    break
  } elseif {$full ne "" && [cudaenv_older $driver $full]} {
    puts stderr "$name: driver $driver is below $full (full support): running under minor-version compatibility (no JIT of newer PTX)"
  }
}

)tcl";

// A variable's value from before the load is kept in __CUDAENV_BEFORE_<NAME> and given back on
// unload: Environment Modules sets a variable to unsetenv's value when unloading. Its pushenv
// loses the first value across a `module swap` (measured with 5.2), and within a swap it still
// shows the unloaded module's values: __CUDAENV_SET_<NAME>, what a cuda module set, tells those
// from a user's own. Lmod ignores unsetenv on unload and does not undo a Tcl pushenv across a
// swap: there plain setenv (a variable set before the load is unset by the unload).
constexpr const char* tcl_setenv = R"tcl(proc cudaenv_setenv {name value} {
  if {[info exists ::ModuleTool] && $::ModuleTool eq "Lmod"} { setenv $name $value; return }
  set saved __CUDAENV_BEFORE_$name
  set ours __CUDAENV_SET_$name
  if {[module-info mode unload]} {
    if {[info exists ::env($saved)]} { set before $::env($saved); setenv $saved $before }
    setenv $ours $value
    setenv $name $value
    if {[info exists before]} { unsetenv $name $before }
    return
  }
  if {[info exists ::env($name)]} {
    if {![info exists ::env($ours)] || $::env($ours) ne $::env($name)} { setenv $saved $::env($name) }
  }
  setenv $ours $value
  setenv $name $value
}

)tcl";

// CUDAHOSTCXX and -ccbin, as in the Lua files (lua.cpp), after `set host_compiler …`.
constexpr const char* tcl_host_compiler = R"tcl(set nvcc_flags ""
if {[info exists ::env(NVCC_PREPEND_FLAGS)]} { set nvcc_flags $::env(NVCC_PREPEND_FLAGS) }
if {[module-info mode load]} { set nvcc_flags [string trim "-ccbin $host_compiler $nvcc_flags"] }
cudaenv_setenv CUDAHOSTCXX $host_compiler
cudaenv_setenv NVCC_PREPEND_FLAGS $nvcc_flags
)tcl";

std::string header(const std::string& what) {
  return std::string("#%Module1.0\n## ") + generated_marker + ": " + what +
         "\n## Rerun `cudaenv modules write` after installing or removing toolkits.\n\n";
}

std::string help(const std::string& text) {
  return "proc ModulesHelp {} {\n  puts stderr " + tcl_word(text) + "\n}\n";
}

}  // namespace

std::string tcl_toolkit(const ToolkitModule& toolkit, const ModuleSet& set) {
  std::string text = header("CUDA Toolkit " + toolkit.version);
  text += help("CUDA Toolkit " + toolkit.version + " from " + toolkit.prefix);
  for (const auto& line : whatis_lines(toolkit)) text += "module-whatis " + tcl_word(line) + "\n";
  text += "conflict cuda\n\n";
  text += "set name " + tcl_word("cuda/" + toolkit.version) + "\n";
  text += "set prefix " + tcl_word(toolkit.prefix) + "\n";
  text += "set lowest " + tcl_word(toolkit.lowest_driver().value_or("")) + "\n";
  text += "set full " + tcl_word(toolkit.full_floor.value_or("")) + "\n";
  text += "set floor " + tcl_word(describe_floor(toolkit)) + "\n";
  text += "set fallbacks [list";
  for (const auto& [version, floor] : fallbacks(set))
    text += " [list " + tcl_word(version) + " " + tcl_word(floor) + "]";
  text += "]\n";
  text += tcl_driver_check;
  text += tcl_setenv;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT"})
    text += "cudaenv_setenv " + std::string(variable) + " $prefix\n";
  if (toolkit.has_nvcc) text += "cudaenv_setenv CUDACXX $prefix/bin/nvcc\n";
  if (toolkit.host_compiler)
    text += "set host_compiler " + tcl_word(*toolkit.host_compiler) + "\n" + tcl_host_compiler;
  text += "prepend-path PATH $prefix/bin\n";
  text += "prepend-path LD_LIBRARY_PATH $prefix/lib64\n";
  text += "prepend-path LIBRARY_PATH $prefix/lib64\n";
  if (toolkit.has_stubs) text += "prepend-path LIBRARY_PATH $prefix/lib64/stubs\n";
  if (toolkit.has_include) text += "prepend-path CPATH $prefix/include\n";
  text += "prepend-path CMAKE_PREFIX_PATH $prefix\n";
  if (toolkit.has_man) text += "prepend-path MANPATH $prefix/share/man\n";
  return text;
}

std::string tcl_cudnn(const CudnnModule& cudnn, const ModuleSet& set) {
  const auto major = std::to_string(cudnn.cuda_major);
  const auto name = "cudnn/" + cudnn.version + "-cuda" + major;
  const auto cudas = cuda_modules_of_major(set, cudnn.cuda_major);
  std::string text = header("cuDNN " + cudnn.version + " for CUDA " + major);
  text += help("cuDNN " + cudnn.version + " from " + cudnn.prefix);
  text += "module-whatis {Name: cuDNN}\nmodule-whatis " + tcl_word("Version: " + cudnn.version) +
          "\nmodule-whatis " + tcl_word("Needs: a cuda/" + major + ".x module") +
          "\nconflict cudnn\n\n";
  text += "set prefix " + tcl_word(cudnn.prefix) + "\n";
  text += "if {[module-info mode load]} {\n  set found 0\n  foreach m [list";
  for (const auto& cuda : cudas) text += " " + tcl_word(cuda);
  text += "] {\n    if {[is-loaded $m]} { set found 1 }\n  }\n";
  text += "  if {!$found} {\n    puts stderr " +
          tcl_word(
              name + " needs a CUDA " + major + " toolkit loaded first: " +
              (cudas.empty() ? std::string("none is installed") : "module load " + cudas.front())) +
          "\n    break\n  }\n}\n";
  text += "prepend-path LD_LIBRARY_PATH $prefix/lib\n";
  text += "prepend-path LIBRARY_PATH $prefix/lib\n";
  text += "prepend-path CPATH $prefix/include\n";
  text += "prepend-path CMAKE_PREFIX_PATH $prefix\n";
  return text;
}

}  // namespace cudaenv::modules
