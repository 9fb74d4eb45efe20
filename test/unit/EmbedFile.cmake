# EmbedFile.cmake - writes INPUT as a C++ byte array named NAME into OUTPUT (cmake -P script).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by EmbedFile.cmake.\nalignas(8) static const unsigned char ${NAME}[] = {${bytes}};\n")
