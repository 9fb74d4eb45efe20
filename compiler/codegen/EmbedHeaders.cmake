# Writes OUTPUT: a C++ array of {include name, text} for every device header in
# HEADERS (cuda/*.cuh and cuda/*.h), so the device building blocks are embedded into kiln-compile.
set(content "// Generated from compiler/codegen/cuda/*.cuh and *.h. Do not edit.\n")
string(APPEND content "const std::pair<const char *, const char *> kEmbeddedHeaders[] = {\n")
foreach(h ${HEADERS})
  get_filename_component(name ${h} NAME)
  file(READ ${h} text)
  string(APPEND content "  {\"kiln/${name}\", R\"KILNCUDA(${text})KILNCUDA\"},\n")
endforeach()
string(APPEND content "};\n")
file(WRITE ${OUTPUT}.tmp "${content}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUTPUT}.tmp ${OUTPUT})
